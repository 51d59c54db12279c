/**
 * The static CLOUD_* keys as an AWS SDK client takes them; without both
 * halves, undefined, so the SDK's own chain (role, profile, environment)
 * finds them.
 */
export function cloudCredentials(keys: {
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
}): { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined {
  return keys.accessKeyId && keys.secretAccessKey
    ? { accessKeyId: keys.accessKeyId, secretAccessKey: keys.secretAccessKey, sessionToken: keys.sessionToken }
    : undefined;
}
