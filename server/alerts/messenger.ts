import { z } from 'zod';

/**
 * The messenger channel, speaking the Telegram Bot API wire format:
 * POST {base}/bot{token}/sendMessage with {chat_id, text}; the answer is
 * {ok: true, result: {...}} or {ok: false, error_code, description}.
 */
export type MessengerConfig = { baseUrl: string; botToken?: string; chatId?: string };

export function messengerConfigured(config: MessengerConfig): boolean {
  return Boolean(config.botToken && config.chatId);
}

const TelegramAnswer = z.object({ ok: z.boolean(), description: z.string().optional() });

/** Sends one message; never throws. The token is part of the URL, so errors never carry the URL. */
export async function sendMessengerMessage(
  config: MessengerConfig,
  text: string,
  options: { timeoutMs?: number } = {},
): Promise<{ ok: true } | { ok: false; error: string }> {
  if (!config.botToken || !config.chatId) return { ok: false, error: 'messenger not configured' };
  const url = `${config.baseUrl.replace(/\/+$/, '')}/bot${config.botToken}/sendMessage`;
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ chat_id: config.chatId, text: text.slice(0, 4096), disable_web_page_preview: true }),
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
    const parsed = TelegramAnswer.safeParse(await response.json().catch(() => null));
    if (response.ok && parsed.success && parsed.data.ok) return { ok: true };
    return { ok: false, error: `messenger answered ${response.status}${parsed.success && parsed.data.description ? `: ${parsed.data.description}` : ''}` };
  } catch (error) {
    return { ok: false, error: `messenger unreachable: ${error instanceof Error ? error.name : 'error'}` };
  }
}
