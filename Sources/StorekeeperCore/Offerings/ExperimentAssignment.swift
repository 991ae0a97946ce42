import Digest

/// Which variant a user sees: the first 8 bytes of SHA-256("<experiment id>\n<user id>") as a
/// big-endian integer, modulo the sum of the weights, falls in one variant's range. It depends
/// on nothing but the two ids and the variants, so every instance, before and after a restart,
/// puts a user in the same variant without asking the database; a 64-bit value makes the
/// modulo's bias negligible (at most 4000/2^64).
package enum ExperimentAssignment {
  package static func variant(
    experimentId: String, userId: String, variants: [ExperimentVariant]
  ) -> ExperimentVariant? {
    let bucket = key(experimentId: experimentId, userId: userId).bucket
    return index(bucket: bucket, variants: variants).map { variants[$0] }
  }

  /// The index of the variant whose range `bucket` falls in; nil when no variant has weight.
  package static func index(bucket: UInt64, variants: [ExperimentVariant]) -> Int? {
    let total = variants.reduce(0) { $0 + max(0, $1.weight) }
    guard total > 0 else { return nil }
    var point = bucket % UInt64(total)
    for index in variants.indices where variants[index].weight > 0 {
      let weight = UInt64(variants[index].weight)
      if point < weight { return index }
      point -= weight
    }
    return variants.count - 1
  }

  package static func bucket(experimentId: String, userId: String) -> UInt64 {
    key(experimentId: experimentId, userId: userId).bucket
  }

  /// The first 16 bytes of the digest: its first 8 are the bucket, and all 16 name the
  /// (experiment, user) pair in the exposure buffer. Hashed on the stack: this runs for every
  /// request an experiment decides.
  package static func key(experimentId: String, userId: String) -> ExposureKey {
    let experiment = experimentId.utf8
    let user = userId.utf8
    let length = experiment.count + 1 + user.count
    let digestBytes = SHA256Digest.byteCount
    return withUnsafeTemporaryAllocation(byteCount: digestBytes + length, alignment: 8) { buffer in
      let message = UnsafeMutableRawBufferPointer(rebasing: buffer[digestBytes...])
      message.copyBytes(from: experiment)
      message[experiment.count] = UInt8(ascii: "\n")
      UnsafeMutableRawBufferPointer(rebasing: message[(experiment.count + 1)...]).copyBytes(
        from: user)
      let digest = UnsafeMutableRawBufferPointer(rebasing: buffer[..<digestBytes])
      SHA256Digest.hash(UnsafeRawBufferPointer(message), into: digest)
      return ExposureKey(
        bucket: UInt64(bigEndian: digest.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
        rest: UInt64(bigEndian: digest.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
    }
  }
}
