-- 0007: topic flow limits (issue 36, ADR 0043). `topic_limits` keeps each limited topic's
-- limits (JSON, core/flow/limits.ts), with `limits_version` in meta moved by the same
-- statement, read by every process as the paused topics are. The state they govern:
-- `flow_buckets` (a token bucket per topic; its row also serialises the topic's admissions)
-- and `flow_slots` (deliveries in flight and admissions, each held until a time), changed
-- only by `flow_admit` and `flow_bind`, which apply the rules of core/flow/token-bucket.ts
-- and flow-ledger.ts in one transaction each. The bucket row is rewritten on every
-- admission: fillfactor 50 keeps those updates HOT.

CREATE TABLE S.topic_limits (
  topic  text COLLATE "C" PRIMARY KEY,
  limits text   NOT NULL,
  set_at bigint NOT NULL
);

INSERT INTO S.meta (key, value) VALUES ('limits_version', '0');

CREATE TABLE S.flow_buckets (
  topic  text COLLATE "C" PRIMARY KEY,
  tokens double precision NOT NULL,
  at     bigint NOT NULL
) WITH (fillfactor = 50);

CREATE TABLE S.flow_slots (
  topic  text COLLATE "C" NOT NULL,
  holder text COLLATE "C" NOT NULL,
  n      integer NOT NULL,
  until  bigint NOT NULL,
  PRIMARY KEY (topic, holder)
);

CREATE FUNCTION S.flow_admit(p_topic text, p_rate double precision, p_period double precision, p_burst double precision,
                             p_concurrency integer, p_want integer, p_holder text, p_hold_until bigint, p_now bigint,
                             OUT granted integer, OUT retry_at bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_tokens double precision;
  v_at bigint;
  v_held bigint;
BEGIN
  granted := p_want;
  retry_at := 0;
  -- The bucket row is the topic's lock, also for a topic with a concurrency and no rate.
  INSERT INTO S.flow_buckets (topic, tokens, at) VALUES (p_topic, p_burst, p_now) ON CONFLICT (topic) DO NOTHING;
  SELECT tokens, at INTO v_tokens, v_at FROM S.flow_buckets WHERE topic = p_topic FOR UPDATE;
  IF p_rate IS NOT NULL THEN
    v_tokens := least(p_burst, v_tokens + greatest(0, p_now - v_at) * p_rate / p_period);
    v_at := greatest(v_at, p_now);
    granted := least(granted, floor(v_tokens)::integer);
  END IF;
  IF p_concurrency IS NOT NULL THEN
    DELETE FROM S.flow_slots WHERE topic = p_topic AND until <= p_now;
    SELECT coalesce(sum(n), 0) INTO v_held FROM S.flow_slots WHERE topic = p_topic;
    granted := greatest(0, least(granted, p_concurrency - v_held));
    IF granted > 0 THEN
      INSERT INTO S.flow_slots (topic, holder, n, until) VALUES (p_topic, p_holder, granted, p_hold_until)
      ON CONFLICT (topic, holder) DO UPDATE SET n = excluded.n, until = excluded.until;
    END IF;
  END IF;
  IF p_rate IS NOT NULL THEN
    UPDATE S.flow_buckets SET tokens = v_tokens - granted, at = v_at WHERE topic = p_topic;
    IF granted = 0 AND v_tokens < 1 THEN
      retry_at := v_at + ceil((1 - v_tokens) * p_period / p_rate)::bigint;
    END IF;
  END IF;
END
$fn$;

CREATE FUNCTION S.flow_bind(p_topic text, p_rate double precision, p_period double precision, p_burst double precision,
                            p_holder text, p_unused integer, p_ids text[], p_untils bigint[], p_now bigint)
RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  v_until bigint;
BEGIN
  IF p_rate IS NOT NULL AND p_unused > 0 THEN
    UPDATE S.flow_buckets
       SET tokens = least(p_burst, least(p_burst, tokens + greatest(0, p_now - at) * p_rate / p_period) + p_unused),
           at = greatest(at, p_now)
     WHERE topic = p_topic;
  END IF;
  DELETE FROM S.flow_slots WHERE topic = p_topic AND holder = p_holder RETURNING until INTO v_until;
  -- An admission held past its time counts no more, nor do its deliveries.
  IF v_until IS NOT NULL AND v_until > p_now AND cardinality(p_ids) > 0 THEN
    INSERT INTO S.flow_slots (topic, holder, n, until)
    SELECT p_topic, id, 1, u FROM unnest(p_ids, p_untils) AS lease(id, u)
    ON CONFLICT (topic, holder) DO UPDATE SET n = 1, until = excluded.until;
  END IF;
END
$fn$;
