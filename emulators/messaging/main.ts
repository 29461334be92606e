import { readPort, runMain } from '../../lib/config.ts';
import { startEmulator } from '../kit/emulator.ts';
import { createMessagingEmulator } from './emulator.ts';

runMain(async () => {
  const port = readPort(process.env, 'MESSAGING_EMULATOR_PORT', 4104);
  const { url } = await startEmulator(createMessagingEmulator(), port, process.env.HOST ?? '127.0.0.1');
  console.log(`messaging emulator on ${url} (control: ${url}/__emulator/)`);
});
