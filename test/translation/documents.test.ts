// The canonical document part in each upstream encoder (issue 44 item 2): Gemini, Converse and
// Responses take bytes, URLs and text in their own shapes, and refuse what they cannot take.
import t from 'tap';
import type { CanonicalRequest, DocumentPart } from '../../core/plugin-api/canonical.ts';
import { encodeGeminiRequest } from '../../plugins/vendor-google/codec/index.ts';
import { encodeConverseRequest } from '../../plugins/vendor-bedrock/codec/converse-request.ts';
import { encodeResponsesRequest } from '../../plugins/vendor-openai/codec/responses-request.ts';
import { fakeRoute } from '../support/fake-route.ts';

const PDF = Buffer.from('%PDF-1.4').toString('base64');
const withDoc = (doc: DocumentPart): CanonicalRequest => ({ model: 'm-up', messages: [{ role: 'user', content: [{ type: 'text', text: 'read' }, doc] }] });
const pdf: DocumentPart = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, filename: 'Q3 report.pdf' };
const url: DocumentPart = { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } };
const text: DocumentPart = { type: 'document', source: { type: 'text', text: 'notes' } };
const fileId: DocumentPart = { type: 'document', source: { type: 'file_id', file_id: 'file-xyz' } };

t.test('Gemini: inline bytes, a file URI, text; a file id is refused', async (t) => {
  const parts = (doc: DocumentPart) => (encodeGeminiRequest(withDoc(doc), 'json-schema') as any).contents[0].parts[1];
  t.same(parts(pdf), { inlineData: { mimeType: 'application/pdf', data: PDF } });
  t.same(parts(url), { fileData: { mimeType: 'application/pdf', fileUri: 'https://example.com/a.pdf' } });
  t.same(parts(text), { text: 'notes' });
  t.throws(() => parts(fileId), { code: 'RELAY_ERR_CONTENT_UNSUPPORTED', message: /m-up.*file-xyz/ });
});

t.test('Converse: a named pdf document, text as txt bytes; an https URL is refused', async (t) => {
  const block = (doc: DocumentPart) => (encodeConverseRequest(withDoc(doc), fakeRoute('m-up')) as any).messages[0].content[1];
  t.same(block(pdf), { document: { format: 'pdf', name: 'Q3 report', source: { bytes: PDF } } });
  t.same(block(text), { document: { format: 'txt', name: 'document', source: { bytes: Buffer.from('notes').toString('base64') } } });
  t.throws(() => block(url), { code: 'RELAY_ERR_CONTENT_UNSUPPORTED', message: /document URL/ });
  t.throws(() => block({ type: 'document', source: { type: 'base64', media_type: 'application/zip', data: 'AA==' } }), { code: 'RELAY_ERR_CONTENT_UNSUPPORTED', message: /application\/zip/ });
});

t.test('Responses: input_file as a data URL with its name, a file_url, a file_id; text as input_text', async (t) => {
  const part = (doc: DocumentPart) => (encodeResponsesRequest(withDoc(doc), fakeRoute('m-up')) as any).input[0].content[1];
  t.same(part(pdf), { type: 'input_file', file_data: `data:application/pdf;base64,${PDF}`, filename: 'Q3 report.pdf' });
  t.same(part(url), { type: 'input_file', file_url: 'https://example.com/a.pdf' });
  t.same(part(fileId), { type: 'input_file', file_id: 'file-xyz' });
  t.same(part(text), { type: 'input_text', text: 'notes' });
});
