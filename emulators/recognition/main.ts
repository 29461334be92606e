import { readPort, runMain } from '../../lib/config.ts';
import { startEmulator } from '../kit/emulator.ts';
import { createRecognitionEmulator } from './emulator.ts';

runMain(async () => {
  const port = readPort(process.env, 'RECOGNITION_EMULATOR_PORT', 4101);
  const { url } = await startEmulator(createRecognitionEmulator(), port, process.env.HOST ?? '127.0.0.1');
  console.log(`recognition emulator on ${url}/api/v1 (control: ${url}/__emulator/)`);
});
