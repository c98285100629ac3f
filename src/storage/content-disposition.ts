// The download header of signed files: the local file route sends it, the S3 store asks S3 to send it
// (response-content-disposition), so a file downloads under the same name from either store.

/** attachment; filename="ascii fallback"; filename*=UTF-8''percent-encoded (RFC 6266 / RFC 8187). */
export function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
