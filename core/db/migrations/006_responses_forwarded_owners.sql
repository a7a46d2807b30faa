-- Who a Responses answer passed through to OpenAI belongs to (core/responses-state/forwarded-owners.ts):
-- its response id and output item ids, so another owner naming them (previous_response_id,
-- item_reference) is refused instead of continuing a conversation under the host's shared key.
CREATE TABLE responses_forwarded_owners (
  -- a response or item id as the answer gave it (hashed when long, as responses_state_items)
  id          text PRIMARY KEY,
  -- 'key:<relay key id>' or 'policy:<policy id>' (config responsesState.scope)
  owner       text NOT NULL,
  expires_at  timestamptz NOT NULL
);

CREATE INDEX responses_forwarded_owners_expires ON responses_forwarded_owners (expires_at);
