/// A response body made in pieces after the head has gone out: an export of any size. The
/// server runs `produce` in the handler's task once the head is written; every
/// `BodyWriter.write` waits while the connection already holds `streamBufferBytes` unsent, so
/// memory stays bounded however slow the client, and throws once the client has gone, so the
/// producer's loop ends there.
///
/// HTTP/1.1 clients get it chunked, and the connection stays open after the last chunk;
/// HTTP/1.0 clients are refused (505), since a body cut short would look complete to them. A
/// producer that throws after the head cuts the chunked body short (no last chunk), so a
/// client can tell a failed export from a finished one.
public struct BodyStream: Sendable {
  public typealias Producer = @Sendable (BodyWriter) async throws -> Void
  let produce: Producer

  public init(_ produce: @escaping Producer) {
    self.produce = produce
  }
}
