-- Relay's Responses state (core/responses-state/store.ts): a stored response and its conversation,
-- sealed under RELAY_MASTER_KEY, readable only by its owner (a relay key or a policy).
CREATE TABLE responses_state (
  id          text PRIMARY KEY,
  -- 'key:<relay key id>' or 'policy:<policy id>' (config responsesState.scope)
  owner       text NOT NULL,
  -- JSON of { response, items, inputFrom }: sealed (v1.…) or, without a master key, 'plain:' + JSON
  payload     text NOT NULL,
  size_bytes  integer NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL
);

CREATE INDEX responses_state_expires ON responses_state (expires_at);

-- Every item a stored response added (its own input and output items), for item_reference.
CREATE TABLE responses_state_items (
  item_id      text NOT NULL,
  owner        text NOT NULL,
  response_id  text NOT NULL REFERENCES responses_state (id) ON DELETE CASCADE,
  PRIMARY KEY (owner, item_id)
);

CREATE INDEX responses_state_items_response ON responses_state_items (response_id);
