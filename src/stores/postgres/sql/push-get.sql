-- push-get: topic $1's push subscription.
SELECT subscription FROM S.push_subscriptions WHERE topic = $1
