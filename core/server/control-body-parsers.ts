// The control listener's request bodies: JSON and nothing else. An empty body is no body, whatever
// its content-type (clients and shell helpers send the header on DELETE and POST actions too);
// a body in any other type (text/plain included, which Fastify would hand to routes as a string)
// is a 415 naming the type sent and the one accepted.
import type { FastifyInstance } from 'fastify';
import { echoedName } from '../echoed-name.ts';
import { RelayError } from '../errors.ts';

/** The media type alone, lower-cased, without parameters; '' when none was sent. */
function mediaTypeOf(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

export function unsupportedControlBody(contentType: string | undefined): RelayError {
  const sent = mediaTypeOf(contentType);
  const what = sent === '' ? 'a body without a content-type' : `content-type ${JSON.stringify(echoedName(sent))}`;
  return new RelayError('RELAY_ERR_UNSUPPORTED_MEDIA_TYPE', `${what} is not accepted: the control API takes application/json`);
}

export function installControlBodyParsers(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if ((body as string).trim() === '') return done(null, undefined);
    void parseJson(request, body as string, done); // calls done itself; returns nothing to wait for
  });
  // Every other type, and a body sent without one.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    if ((body as Buffer).length === 0) return done(null, undefined);
    done(unsupportedControlBody(request.headers['content-type']), undefined);
  });
}
