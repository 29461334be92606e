import { readPort, runMain } from '../../lib/config.ts';
import { startEmulator } from '../kit/emulator.ts';
import { readMarketplaceName } from '../../subgraphs/marketplace/config.ts';
import { createMarketplaceEmulator } from './emulator.ts';

runMain(async () => {
  const port = readPort(process.env, 'MARKETPLACE_EMULATOR_PORT', 4102);
  const marketplace = readMarketplaceName(process.env);
  const { url } = await startEmulator(createMarketplaceEmulator({ marketplace }), port, process.env.HOST ?? '127.0.0.1');
  console.log(`marketplace emulator on ${url} for marketplace "${marketplace}" (control: ${url}/__emulator/)`);
});
