// delayq/client: the HTTP client. Curated named exports; nothing of the server or stores.
export { DelayQClient, DEFAULT_SERVER_URL } from './client.js';
export type {
  ClientListOptions,
  ClientNackOptions,
  ClientReserveOptions,
  ClientScheduleInput,
  ClientSchedulePageOptions,
  ClientStatsOptions,
  ClientTime,
  ClientWhen,
  DelayQClientOptions,
} from './client.js';
export type { ClientEventsOptions } from './client-events.js';
export { DelayQClientError, isDelayQClientError } from './errors.js';
export { CLIENT_ERROR_CODES, CORE_ERROR_CODES, SERVER_ERROR_CODES } from '../wire/error-codes.js';
export type { AnyErrorCode, ClientErrorCode, WireErrorCode } from '../wire/error-codes.js';
export type {
  BatchItemResult,
  DeliveryView,
  ErrorBody,
  ExtendResponse,
  HealthResponse,
  NackResponse,
  PushSecretView,
  PushSubscriptionRequest,
  PushSubscriptionResponse,
  PushSubscriptionView,
  RecurringListResponse,
  RecurringManyRequest,
  RecurringManyResponse,
  RecurringNextResponse,
  RecurringPreviewRequest,
  RecurringRequest,
  RecurringView,
  ScheduleRequest,
  ScheduleResponse,
  StatsResponse,
  TimelineResponse,
  RetryDeadManyResponse,
  TopicLimitsRequest,
  TopicLimitsView,
  TopicPauseResponse,
  TopicPurgeResponse,
  TopicPurgeState,
  CancelDeadManyResponse,
  TaskState,
  TaskView,
  AttemptView,
  TaskEventView,
  TaskEventTypeName,
} from '../wire/types.js';
