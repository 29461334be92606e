import { readHost, runMain } from '../../lib/config.ts';
import { readEmulatorPort, SERVICE_ENTRY } from '../../lib/services.ts';
import { startEmulator } from '../kit/emulator.ts';
import { createMessagingEmulator, readMessagingEmulatorOptions } from './emulator.ts';

runMain(async () => {
  const port = readEmulatorPort(process.env, SERVICE_ENTRY.messaging);
  const { url } = await startEmulator(createMessagingEmulator(readMessagingEmulatorOptions(process.env)), port, readHost(process.env));
  console.log(`messaging emulator on ${url} (control: ${url}/__emulator/)`);
});
