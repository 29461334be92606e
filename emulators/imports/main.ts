import { readPort, runMain } from '../../lib/config.ts';
import { startEmulator } from '../kit/emulator.ts';
import { IMPORTS_EMULATOR_PORT } from '../../subgraphs/imports/config.ts';
import { createImportsEmulator } from './emulator.ts';

runMain(async () => {
  const port = readPort(process.env, 'IMPORTS_EMULATOR_PORT', IMPORTS_EMULATOR_PORT);
  const { url } = await startEmulator(createImportsEmulator(), port, process.env.HOST ?? '127.0.0.1');
  console.log(`imports emulator on ${url} (control: ${url}/__emulator/, sample files: ${url}/__emulator/files/petstore.json)`);
});
