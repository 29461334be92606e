import { DEMO_STORE_ID, DEMO_TOKEN } from '../../emulators/messaging/data.ts';
import type { SentMessage } from '../../emulators/messaging/emulator.ts';
import type { Delivery } from '../../emulators/kit/webhooks.ts';
import type { EmulatorControl, TestStack } from './stack.ts';

export const member = { 'x-messaging-token': DEMO_TOKEN };

/** The messaging parts of a test stack: its emulator's control surface and its subgraph. */
export function messagingOf(t: TestStack) {
  const emulator: EmulatorControl = t.emulator('messaging');
  const service = t.stack.services.find((candidate) => candidate.name === 'messaging')!;
  const json = async <T>(path: string) => (await (await fetch(`${emulator.url}/__emulator/${path}`)).json()) as T;
  return {
    emulator,
    subgraphUrl: service.subgraphUrl,
    subgraphOrigin: service.subgraphUrl.replace(/\/graphql$/, ''),
    /** Texts the emulator sent to handsets. */
    messages: () => json<SentMessage[]>('messages'),
    /** Callbacks the emulator posted (or is still trying to). */
    deliveries: () => json<Delivery[]>('deliveries'),
    /** A text from a handset to the short code. */
    text: (from: string, body: string, storeId?: string) =>
      emulator.control('inbound', { from, body, ...(storeId ? { storeId } : {}) }) as Promise<{ messageId: string; handled: string; storeId: string | null; subscriberStatus: string | null }>,
    gql: <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>, headers: Record<string, string> = member) => t.gql<T>(query, { variables, headers }),
  };
}

export { DEMO_STORE_ID };
