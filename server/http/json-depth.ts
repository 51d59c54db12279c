import type { NextFunction, Request, Response } from 'express';
import { DomainError } from '../errors.ts';

/**
 * JSON nested deeper than this is refused before it is parsed: no body of
 * ours nests past a handful of levels, and a body nested thousands deep
 * parses fine but overflows the stack of whatever walks it next (validation,
 * the REST adapter), a 500 where the client deserves a 400.
 */
const MAX_JSON_DEPTH = 64;

/** The deepest nesting of objects and arrays in JSON text, counted outside strings; stops counting past `limit`. */
function jsonDepth(text: Buffer | string, limit = MAX_JSON_DEPTH): number {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let at = 0; at < bytes.length; at++) {
    const byte = bytes[at];
    if (inString) {
      if (byte === 0x5c) at++;
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) inString = true;
    else if (byte === 0x7b || byte === 0x5b) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if (byte === 0x7d || byte === 0x5d) depth--;
  }
  return deepest;
}

/** express.json's `verify`: a 400 the error handler reports as BAD_REQUEST (body-parser keeps the status it is given). */
export function refuseDeepJson(_req: unknown, _res: unknown, body: Buffer): void {
  if (jsonDepth(body) > MAX_JSON_DEPTH) {
    throw Object.assign(new Error(`The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`), { status: 400, type: 'entity.too.deep' });
  }
}

/**
 * The same bound on a tRPC GET, whose input is JSON in the query (`?input=`, one per call or a batch's
 * object): refused before tRPC parses it, so nothing that walks the input ever sees it. Node's 16 KB
 * header limit already stops a URL past about 8,000 levels (a 431); this stops the 65th.
 */
export function refuseDeepJsonInput(req: Request, _res: Response, next: NextFunction): void {
  const query = req.originalUrl.indexOf('?');
  if (query < 0) return next();
  for (const input of new URLSearchParams(req.originalUrl.slice(query + 1)).getAll('input')) {
    if (jsonDepth(input) > MAX_JSON_DEPTH) return next(new DomainError('BAD_REQUEST', `The JSON input is nested deeper than ${MAX_JSON_DEPTH} levels`));
  }
  next();
}
