import { readHost, runMain } from '../../lib/config.ts';
import { readEmulatorPort, SERVICE_ENTRY } from '../../lib/services.ts';
import { startEmulator } from '../kit/emulator.ts';
import { createDashboardsEmulator } from './emulator.ts';

runMain(async () => {
  const port = readEmulatorPort(process.env, SERVICE_ENTRY.dashboards);
  const { url } = await startEmulator(createDashboardsEmulator(), port, readHost(process.env));
  console.log(`dashboards emulator on ${url} (control: ${url}/__emulator/)`);
});
