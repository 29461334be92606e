import { Agent, request } from 'undici';

export interface Delivery {
  id: string;
  webhookId: string;
  type: string;
  /** The target with its last path segment masked: it may be the receiver's secret. */
  target: string;
  attempts: number;
  state: 'pending' | 'delivered' | 'failed';
  lastStatus?: number | 'error';
}

export interface WebhookDeliverer {
  deliver(target: { webhookId: string; url: string }, event: { id: string; type: string; body: unknown }): void;
  deliveries(): Delivery[];
  /** Forgets history and cancels pending retries. */
  reset(): void;
  close(): Promise<void>;
}

export interface WebhookDelivererOptions {
  /** Attempts per delivery, the first included. @default 5 */
  attempts?: number;
  /** Wait before the second attempt, doubled after each. @default 500 */
  retryMs?: number;
  /** @default 5000 */
  timeoutMs?: number;
  /** How a body goes on the wire. @default JSON */
  encode?: (body: unknown) => Promise<EncodedBody>;
  /** @default 'recognition-webhooks/1.0' */
  userAgent?: string;
}

export interface EncodedBody {
  payload: string | Buffer;
  contentType: string;
}

const asJson = async (body: unknown): Promise<EncodedBody> => ({ payload: JSON.stringify(body), contentType: 'application/json' });

const maskTarget = (url: string) => url.replace(/\/[^/]+$/, '/…');

/**
 * Posts events to webhook URLs as the real service would: JSON, in the background, retried with
 * backoff when the receiver fails or cannot be reached.
 */
export function createWebhookDeliverer({ attempts = 5, retryMs = 500, timeoutMs = 5000, encode = asJson, userAgent = 'recognition-webhooks/1.0' }: WebhookDelivererOptions = {}): WebhookDeliverer {
  const agent = new Agent({ keepAliveTimeout: 10_000 });
  let history: Delivery[] = [];
  const timers = new Set<NodeJS.Timeout>();
  // Retries of an attempt in flight during a reset must not come back to life.
  let generation = 0;

  async function attempt(delivery: Delivery, url: string, body: EncodedBody, born = generation): Promise<void> {
    if (born !== generation) return;
    delivery.attempts += 1;
    try {
      const response = await request(url, { method: 'POST', headers: { 'content-type': body.contentType, 'user-agent': userAgent }, body: body.payload, dispatcher: agent, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
      await response.body.dump();
      delivery.lastStatus = response.statusCode;
      if (response.statusCode >= 200 && response.statusCode < 300) {
        delivery.state = 'delivered';
        return;
      }
    } catch {
      delivery.lastStatus = 'error';
    }
    if (born !== generation) return;
    if (delivery.attempts >= attempts) {
      delivery.state = 'failed';
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      void attempt(delivery, url, body, born);
    }, retryMs * 2 ** (delivery.attempts - 1));
    timers.add(timer);
  }

  return {
    deliver(target, event) {
      const delivery: Delivery = { id: event.id, webhookId: target.webhookId, type: event.type, target: maskTarget(target.url), attempts: 0, state: 'pending' };
      history.push(delivery);
      if (history.length > 10_000) history = history.slice(-10_000);
      void encode(event.body).then(
        (encoded) => attempt(delivery, target.url, encoded),
        () => {
          delivery.state = 'failed';
        },
      );
    },
    deliveries: () => history,
    reset() {
      generation += 1;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      history = [];
    },
    async close() {
      this.reset();
      await agent.close();
    },
  };
}
