import { readPort, runMain } from '../../lib/config.ts';
import { startEmulator } from '../kit/emulator.ts';
import { DASHBOARDS_EMULATOR_PORT } from '../../subgraphs/dashboards/config.ts';
import { createDashboardsEmulator } from './emulator.ts';

runMain(async () => {
  const port = readPort(process.env, 'DASHBOARDS_EMULATOR_PORT', DASHBOARDS_EMULATOR_PORT);
  const { url } = await startEmulator(createDashboardsEmulator(), port, process.env.HOST ?? '127.0.0.1');
  console.log(`dashboards emulator on ${url} (control: ${url}/__emulator/)`);
});
