import http from 'node:http';
import { listen, readRequest } from './fake-server.ts';

/**
 * AWS STS's AssumeRole (Query protocol: a form-encoded POST, an XML answer),
 * enough for the real @aws-sdk/client-sts: each known role hands out the
 * credentials the test gives it, when the caller names the role's external
 * id; anything else is refused with STS's own AccessDenied error document.
 */
type StsRole = { externalId: string; credentials: { accessKeyId: string; secretAccessKey: string } };

export type StsFake = {
  url: string;
  roles: Map<string, StsRole>;
  requests: Array<Record<string, string>>;
  close: () => Promise<void>;
};

const NS = 'https://sts.amazonaws.com/doc/2011-06-15/';
const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export async function startStsFake(): Promise<StsFake> {
  const roles = new Map<string, StsRole>();
  const requests: Array<Record<string, string>> = [];
  const server = http.createServer(async (req, res) => {
    const request = await readRequest(req);
    const form = Object.fromEntries(new URLSearchParams(request.body));
    requests.push(form);
    const requestId = `req-${requests.length}`;
    const refuse = (status: number, code: string, message: string) =>
      res
        .writeHead(status, { 'content-type': 'text/xml', 'x-amzn-requestid': requestId })
        .end(
          `<ErrorResponse xmlns="${NS}"><Error><Type>Sender</Type><Code>${code}</Code><Message>${escapeXml(message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
        );
    if (form.Action !== 'AssumeRole') return refuse(400, 'InvalidAction', `Could not find operation ${form.Action}`);
    const role = roles.get(form.RoleArn ?? '');
    if (!role || role.externalId !== form.ExternalId) {
      return refuse(
        403,
        'AccessDenied',
        `User: arn:aws:iam::111111111111:user/folio is not authorized to perform: sts:AssumeRole on resource: ${form.RoleArn}`,
      );
    }
    const expiration = new Date(Date.now() + Number(form.DurationSeconds ?? 3600) * 1000).toISOString();
    res
      .writeHead(200, { 'content-type': 'text/xml', 'x-amzn-requestid': requestId })
      .end(
        `<AssumeRoleResponse xmlns="${NS}"><AssumeRoleResult><AssumedRoleUser><AssumedRoleId>AROAFAKE:${escapeXml(form.RoleSessionName ?? '')}</AssumedRoleId><Arn>${escapeXml(form.RoleArn ?? '')}/${escapeXml(form.RoleSessionName ?? '')}</Arn></AssumedRoleUser><Credentials><AccessKeyId>${role.credentials.accessKeyId}</AccessKeyId><SecretAccessKey>${role.credentials.secretAccessKey}</SecretAccessKey><SessionToken>session-${requestId}</SessionToken><Expiration>${expiration}</Expiration></Credentials></AssumeRoleResult><ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></AssumeRoleResponse>`,
      );
  });
  const listening = await listen(server);
  return { url: listening.url, roles, requests, close: listening.close };
}
