/// Names an (experiment, user) pair in the exposure buffer by the first 16 bytes of the
/// assignment's digest, which the request computed anyway: two integers hash and compare
/// without building a string per request. Two pairs share a key with probability about
/// n²/2^129 (n the keys held, at most 300,000), so a skipped exposure from a collision is not a
/// case to handle.
package struct ExposureKey: Hashable, Sendable {
  /// The first 8 bytes, big-endian: the point the assignment reads.
  package var bucket: UInt64
  package var rest: UInt64

  package init(bucket: UInt64, rest: UInt64) {
    self.bucket = bucket
    self.rest = rest
  }
}
