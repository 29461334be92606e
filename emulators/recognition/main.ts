import { readHost, runMain } from '../../lib/config.ts';
import { readEmulatorPort, SERVICE_ENTRY } from '../../lib/services.ts';
import { startEmulator } from '../kit/emulator.ts';
import { createRecognitionEmulator, readRecognitionEmulatorOptions } from './emulator.ts';

runMain(async () => {
  const port = readEmulatorPort(process.env, SERVICE_ENTRY.recognition);
  const { url } = await startEmulator(createRecognitionEmulator(readRecognitionEmulatorOptions(process.env)), port, readHost(process.env));
  console.log(`recognition emulator on ${url}/api/v1 (control: ${url}/__emulator/)`);
});
