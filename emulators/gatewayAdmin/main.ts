import { readHost, runMain } from '../../lib/config.ts';
import { readEmulatorPort, SERVICE_ENTRY } from '../../lib/services.ts';
import { startEmulator } from '../kit/emulator.ts';
import { createGatewayAdminEmulator } from './emulator.ts';

runMain(async () => {
  const port = readEmulatorPort(process.env, SERVICE_ENTRY.gatewayAdmin);
  const { url } = await startEmulator(createGatewayAdminEmulator(), port, readHost(process.env));
  console.log(`gatewayAdmin emulator on ${url} (admin interface, OAuth 2.0 plugin endpoints and proxy; control: ${url}/__emulator/)`);
});
