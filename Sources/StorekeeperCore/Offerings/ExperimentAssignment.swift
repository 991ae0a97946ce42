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
    let total = variants.reduce(0) { $0 + max(0, $1.weight) }
    guard total > 0 else { return nil }
    var point = bucket(experimentId: experimentId, userId: userId) % UInt64(total)
    for variant in variants where variant.weight > 0 {
      if point < UInt64(variant.weight) { return variant }
      point -= UInt64(variant.weight)
    }
    return variants.last
  }

  package static func bucket(experimentId: String, userId: String) -> UInt64 {
    let digest = SHA256Digest.hash(experimentId + "\n" + userId)
    return digest.prefix(8).reduce(UInt64(0)) { ($0 << 8) | UInt64($1) }
  }
}
