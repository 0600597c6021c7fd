// Files the API hands over in its JSON envelope (`FileContent`: a statement, a receipt), saved
// by the browser as a download: the bytes decoded from base64 into a Blob of the file's type,
// an object URL, a link named after the file clicked, and the URL let go.
import type { Schemas } from "./api";

export type FileContent = Schemas["FileContent"];

/** The file's bytes, from `content_base64` (RFC 4648, with padding). */
export function fileBytes(file: FileContent): Uint8Array<ArrayBuffer> {
  const binary = atob(file.content_base64);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

/** Saves `file` where the browser saves downloads, under its `file_name`. */
export function saveFile(file: FileContent): void {
  saveBlob(file.file_name, new Blob([fileBytes(file)], { type: file.content_type }));
}

/** Saves `blob` where the browser saves downloads, as `name`. */
export function saveBlob(name: string, blob: Blob): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.append(link);
  try {
    link.click();
  } finally {
    link.remove();
    // The download has its bytes once it has started: let the URL go a moment later (at once,
    // some browsers would lose the file).
    setTimeout(() => URL.revokeObjectURL(url), 1_000);
  }
}

/** `12345` bytes as `12 KB`. */
export function sizeText(bytes: number): string {
  if (bytes < 1_000) return `${bytes} bytes`;
  if (bytes < 1_000_000) return `${Math.round(bytes / 1_000)} KB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}
