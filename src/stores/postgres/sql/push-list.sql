-- push-list: every push subscription.
SELECT topic, subscription FROM S.push_subscriptions
