import { readHost, runMain } from '../../lib/config.ts';
import { readEmulatorPort, SERVICE_ENTRY } from '../../lib/services.ts';
import { startEmulator } from '../kit/emulator.ts';
import { readMarketplaceName } from '../../subgraphs/marketplace/config.ts';
import { createMarketplaceEmulator } from './emulator.ts';
import { readEmulatorRateLimits } from '../kit/throttle.ts';

runMain(async () => {
  const port = readEmulatorPort(process.env, SERVICE_ENTRY.marketplace);
  const marketplace = readMarketplaceName(process.env);
  const { url } = await startEmulator(createMarketplaceEmulator({ marketplace, rateLimits: readEmulatorRateLimits(process.env) }), port, readHost(process.env));
  console.log(`marketplace emulator on ${url} for marketplace "${marketplace}" (control: ${url}/__emulator/)`);
});
