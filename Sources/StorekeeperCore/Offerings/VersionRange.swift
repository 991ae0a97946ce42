/// App versions from `from` (inclusive) to `before` (exclusive); either may be left out, not both.
package struct VersionRange: Encodable, Sendable, Equatable {
  package var from: AppVersion?
  package var before: AppVersion?

  func contains(_ version: AppVersion) -> Bool {
    if let from, version < from { return false }
    if let before, !(version < before) { return false }
    return true
  }

  enum CodingKeys: String, CodingKey { case from, before }

  package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encodeIfPresent(from?.description, forKey: .from)
    try container.encodeIfPresent(before?.description, forKey: .before)
  }
}
