/**
 * Every scenario of `npm run chaos`, in the order a run without names runs them (the pg-boss
 * rows of the PostgreSQL cells, `pgboss-*`, only in a full run or when named). A scenario
 * is one module here (its own helpers beside it); what several share lives in chaos/
 * (processes.ts, round.ts, servers.ts, readings.ts).
 */
import type { Scenario } from '../round.js';
import { clusterFailoverScenario, clusterFailoverWaitScenario } from './cluster-failover.js';
import { clusterMasterDownScenario } from './cluster-master-down.js';
import { httpScenario } from './http.js';
import { pgActiveReadersScenario, pgbossActiveReadersScenario } from './pg-active-readers.js';
import { pgBackendKillScenario, pgbossBackendKillScenario } from './pg-backend-kill.js';
import { pgIdleInTxScenario, pgbossIdleInTxScenario } from './pg-idle-in-tx.js';
import { pgOverloadScenario, pgbossOverloadScenario } from './pg-overload.js';
import { pgPoolExhaustionScenario, pgbossPoolExhaustionScenario } from './pg-pool-exhaustion.js';
import { longHandlersScenario, pgLongHandlersScenario } from './long-handlers.js';
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
  longHandlersScenario,
  clusterFailoverScenario,
  clusterFailoverWaitScenario,
  clusterMasterDownScenario,
  pgSigkillScenario,
  pgRestartScenario,
  pgTakeoverScenario,
  pgBackendKillScenario,
  pgbossBackendKillScenario,
  pgIdleInTxScenario,
  pgbossIdleInTxScenario,
  pgActiveReadersScenario,
  pgbossActiveReadersScenario,
  pgPoolExhaustionScenario,
  pgbossPoolExhaustionScenario,
  pgOverloadScenario,
  pgbossOverloadScenario,
  pgLongHandlersScenario,
];
