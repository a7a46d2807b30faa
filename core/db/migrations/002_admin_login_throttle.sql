-- Failed dashboard sign-ins, counted per username and per client address, so that every
-- instance slows down the same guesser (core/control/login-throttle.ts).
CREATE TABLE admin_login_failures (
  -- 'user:<username>' or 'ip:<address>'
  throttle_key     text PRIMARY KEY,
  failures         integer NOT NULL,
  last_failed_at   timestamptz NOT NULL DEFAULT now(),
  locked_until     timestamptz
);

CREATE INDEX admin_login_failures_last_failed ON admin_login_failures (last_failed_at);
