// OpenAI file inputs (Chat `file` parts, Responses `input_file`) as canonical documents.
import type { DocumentPart } from '../../../core/plugin-api/canonical.ts';
import { RelayError } from '../../../core/plugin-api.ts';

export interface OpenAIFileFields {
  file_data?: string | null;
  file_id?: string | null;
  file_url?: string | null;
  filename?: string | null;
}

/** file_data is a data: URL (raw base64 is read as a PDF, what OpenAI's examples send). */
export function documentFromFile(file: OpenAIFileFields, pointer: string): DocumentPart {
  const filename = typeof file.filename === 'string' && file.filename !== '' ? { filename: file.filename } : {};
  if (typeof file.file_data === 'string' && file.file_data !== '') {
    const match = /^data:([^;,]+);base64,(.*)$/s.exec(file.file_data);
    const source: DocumentPart['source'] = match
      ? { type: 'base64', media_type: match[1], data: match[2] }
      : { type: 'base64', media_type: 'application/pdf', data: file.file_data };
    return { type: 'document', source, ...filename };
  }
  if (typeof file.file_url === 'string' && file.file_url !== '') return { type: 'document', source: { type: 'url', url: file.file_url }, ...filename };
  if (typeof file.file_id === 'string' && file.file_id !== '') return { type: 'document', source: { type: 'file_id', file_id: file.file_id }, ...filename };
  throw new RelayError('RELAY_ERR_BAD_REQUEST', `${pointer}: a file needs file_data, file_url or file_id.`, { field: pointer });
}
