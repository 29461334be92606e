import { readPort, runMain } from '../../lib/config.ts';
import { startEmulator } from '../kit/emulator.ts';
import { GATEWAY_ADMIN_EMULATOR_PORT } from '../../subgraphs/gatewayAdmin/config.ts';
import { createGatewayAdminEmulator } from './emulator.ts';

runMain(async () => {
  const port = readPort(process.env, 'GATEWAY_ADMIN_EMULATOR_PORT', GATEWAY_ADMIN_EMULATOR_PORT);
  const { url } = await startEmulator(createGatewayAdminEmulator(), port, process.env.HOST ?? '127.0.0.1');
  console.log(`gatewayAdmin emulator on ${url} (admin interface and OAuth 2.0 plugin endpoints; control: ${url}/__emulator/)`);
});
