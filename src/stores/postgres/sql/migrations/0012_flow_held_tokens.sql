-- 0012: the tokens an admission takes stay held until it is bound (issue 46, ADR 0052), so a
-- topic's bucket refills only up to burst minus them: tokens taken by consumers waiting for a
-- task and a bucket refilled meanwhile never add up to more than burst at once (three
-- processes held to burst 20 delivered 46-53 in a second). `flow_slots.tokens` is what each
-- holder row holds (its admission's granted, with a rate; 0 for a delivery's slot), and a
-- rate-only topic's admissions now have holder rows too (n 0). flow_admit and flow_bind
-- apply core/flow/flow-ledger.ts as it is now: the bucket is brought to now with every
-- listed holder's tokens held, run-out holders are dropped after that, and a bind refunds
-- its unused tokens only while its admission is still held.

ALTER TABLE S.flow_slots ADD COLUMN tokens double precision NOT NULL DEFAULT 0;

CREATE OR REPLACE FUNCTION S.flow_admit(p_topic text, p_rate double precision, p_period double precision, p_burst double precision,
                                        p_concurrency integer, p_want integer, p_holder text, p_hold_until bigint, p_now bigint,
                                        OUT granted integer, OUT retry_at bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_tokens double precision;
  v_at bigint;
  v_held bigint;
  v_held_tokens double precision;
BEGIN
  granted := p_want;
  retry_at := 0;
  -- The bucket row is the topic's lock, also for a topic with a concurrency and no rate.
  INSERT INTO S.flow_buckets (topic, tokens, at) VALUES (p_topic, p_burst, p_now) ON CONFLICT (topic) DO NOTHING;
  SELECT tokens, at INTO v_tokens, v_at FROM S.flow_buckets WHERE topic = p_topic FOR UPDATE;
  IF p_rate IS NOT NULL THEN
    SELECT coalesce(sum(tokens), 0) INTO v_held_tokens FROM S.flow_slots WHERE topic = p_topic;
    v_tokens := least(greatest(0, p_burst - v_held_tokens), v_tokens + greatest(0, p_now - v_at) * p_rate / p_period);
    v_at := greatest(v_at, p_now);
    granted := greatest(0, least(granted, floor(v_tokens)::integer));
  END IF;
  -- Run-out holders and slots count no more (after the refill: the time they were held refilled nothing).
  DELETE FROM S.flow_slots WHERE topic = p_topic AND until <= p_now;
  IF p_concurrency IS NOT NULL THEN
    SELECT coalesce(sum(n), 0) INTO v_held FROM S.flow_slots WHERE topic = p_topic;
    granted := greatest(0, least(granted, p_concurrency - v_held));
  END IF;
  IF granted > 0 THEN
    INSERT INTO S.flow_slots (topic, holder, n, tokens, until)
    VALUES (p_topic, p_holder, CASE WHEN p_concurrency IS NULL THEN 0 ELSE granted END, CASE WHEN p_rate IS NULL THEN 0 ELSE granted END, p_hold_until)
    ON CONFLICT (topic, holder) DO UPDATE SET n = excluded.n, tokens = excluded.tokens, until = excluded.until;
  END IF;
  IF p_rate IS NOT NULL THEN
    UPDATE S.flow_buckets SET tokens = v_tokens - granted, at = v_at WHERE topic = p_topic;
    IF granted = 0 AND v_tokens < 1 THEN
      retry_at := v_at + ceil((1 - v_tokens) * p_period / p_rate)::bigint;
    END IF;
  END IF;
END
$fn$;

CREATE OR REPLACE FUNCTION S.flow_bind(p_topic text, p_rate double precision, p_period double precision, p_burst double precision,
                                       p_holder text, p_unused integer, p_ids text[], p_untils bigint[], p_now bigint)
RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  v_until bigint;
  v_tokens double precision;
  v_at bigint;
  v_held_tokens double precision;
BEGIN
  IF p_rate IS NOT NULL THEN
    -- Brought to now with this admission's tokens still held.
    SELECT tokens, at INTO v_tokens, v_at FROM S.flow_buckets WHERE topic = p_topic FOR UPDATE;
    IF FOUND THEN
      SELECT coalesce(sum(tokens), 0) INTO v_held_tokens FROM S.flow_slots WHERE topic = p_topic;
      v_tokens := least(greatest(0, p_burst - v_held_tokens), v_tokens + greatest(0, p_now - v_at) * p_rate / p_period);
      v_at := greatest(v_at, p_now);
    END IF;
  END IF;
  DELETE FROM S.flow_slots WHERE topic = p_topic AND until <= p_now;
  -- An admission held past its time counts no more, nor do its deliveries; its tokens came back to the bucket's room.
  DELETE FROM S.flow_slots WHERE topic = p_topic AND holder = p_holder RETURNING until INTO v_until;
  IF v_tokens IS NOT NULL THEN
    IF p_unused > 0 AND v_until IS NOT NULL THEN
      SELECT coalesce(sum(tokens), 0) INTO v_held_tokens FROM S.flow_slots WHERE topic = p_topic;
      v_tokens := least(greatest(0, p_burst - v_held_tokens), v_tokens + p_unused);
    END IF;
    UPDATE S.flow_buckets SET tokens = v_tokens, at = v_at WHERE topic = p_topic;
  END IF;
  IF v_until IS NOT NULL AND cardinality(p_ids) > 0 THEN
    INSERT INTO S.flow_slots (topic, holder, n, until)
    SELECT p_topic, id, 1, u FROM unnest(p_ids, p_untils) AS lease(id, u)
    ON CONFLICT (topic, holder) DO UPDATE SET n = 1, tokens = 0, until = excluded.until;
  END IF;
END
$fn$;
