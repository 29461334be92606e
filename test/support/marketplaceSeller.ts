import { DEMO_CREDENTIALS } from '../../emulators/marketplace/data.ts';

/** The demo seller's credential, as a client of the graph sends it. */
export const SELLER_HEADERS: Readonly<Record<string, string>> = {
  'x-marketplace-email': DEMO_CREDENTIALS.email,
  'x-marketplace-api-key': DEMO_CREDENTIALS.apiKey,
  'x-marketplace-account-key': DEMO_CREDENTIALS.accountKey,
};
