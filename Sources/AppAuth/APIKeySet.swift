import Digest

/// Server-to-server keys (`APP_API_KEYS`), kept only as SHA-256 digests: a presented key is
/// hashed and compared with every digest, in constant time, so neither timing nor a leaked
/// configuration gives a key away.
public struct APIKeySet: Sendable {
  public struct Entry: Sendable {
    public var name: String
    public var digest: [UInt8]
    public init(name: String, digest: [UInt8]) {
      self.name = name
      self.digest = digest
    }
  }

  public let entries: [Entry]

  public init(_ entries: [Entry]) { self.entries = entries }

  /// The name of the key presented, or nil.
  public func match(_ presented: String) -> String? {
    let digest = SHA256Digest.hash(presented)
    var match: String?
    for entry in entries where ConstantTime.equals(digest, entry.digest) {
      match = entry.name
    }
    return match
  }

  public static func digest(of key: String) -> [UInt8] { SHA256Digest.hash(key) }
}
