/**
 * Every scenario of `npm run chaos`, in the order a run without names runs them. A scenario
 * is one module here (its own helpers beside it); what several share lives in chaos/
 * (processes.ts, round.ts, servers.ts, readings.ts).
 */
import type { Scenario } from '../round.js';
import { clusterFailoverScenario, clusterFailoverWaitScenario } from './cluster-failover.js';
import { clusterMasterDownScenario } from './cluster-master-down.js';
import { httpScenario } from './http.js';
import { pgRestartScenario } from './pg-restart.js';
import { pgSigkillScenario } from './pg-sigkill.js';
import { pgTakeoverScenario } from './pg-takeover.js';
import { redisFlowLimitScenario } from './redis-flow-limit.js';
import { redisOwnerKillScenario } from './redis-owner-kill.js';
import { redisOwnerStopScenario } from './redis-owner-stop.js';
import { redisServerKillScenario } from './redis-server-kill.js';
import { redisServerStopScenario } from './redis-server-stop.js';
import { sqliteScenario } from './sqlite.js';

export const SCENARIOS: readonly Scenario[] = [
  sqliteScenario,
  httpScenario,
  redisOwnerKillScenario,
  redisOwnerStopScenario,
  redisServerKillScenario,
  redisServerStopScenario,
  redisFlowLimitScenario,
  clusterFailoverScenario,
  clusterFailoverWaitScenario,
  clusterMasterDownScenario,
  pgSigkillScenario,
  pgRestartScenario,
  pgTakeoverScenario,
];
