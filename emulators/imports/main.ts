import { readHost, runMain } from '../../lib/config.ts';
import { readEmulatorPort, SERVICE_ENTRY } from '../../lib/services.ts';
import { startEmulator } from '../kit/emulator.ts';
import { createImportsEmulator } from './emulator.ts';

runMain(async () => {
  const port = readEmulatorPort(process.env, SERVICE_ENTRY.imports);
  const { url } = await startEmulator(createImportsEmulator(), port, readHost(process.env));
  console.log(`imports emulator on ${url} (control: ${url}/__emulator/, sample files: ${url}/__emulator/files/petstore.json)`);
});
