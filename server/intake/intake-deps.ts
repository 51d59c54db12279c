import type { Deps } from '../deps.ts';
import type { ReplyLinks } from './replies.ts';

/** What the intake handlers take first: the process's deps, the conversion watch of its worker, the download-link secret. */
export type IntakeDeps = Pick<Deps, 'config' | 'db' | 'boss' | 'log' | 'clock' | 'store' | 'engine' | 'mailer'> & {
  /** Called before a conversion starts, so its end is heard (the sweep is the safety net). */
  watchConversion: (messageId: string, fileId: string) => Promise<void>;
  downloadSecret: string;
};

/** The address the web app and the API are reached at, for links in replies. */
export function publicBase(config: Deps['config']): string {
  return (config.publicBaseUrl ?? `http://localhost:${config.port}`).replace(/\/+$/, '');
}

/** Where replies send people: the web app's sign-up page, PURCHASE_URL, the public address to write to. */
export function replyLinks(config: Deps['config']): ReplyLinks {
  const base = publicBase(config);
  return { publicAddress: config.intake.publicAddress, signUpUrl: `${base}/signup`, buyCreditsUrl: config.product.purchaseUrl };
}
