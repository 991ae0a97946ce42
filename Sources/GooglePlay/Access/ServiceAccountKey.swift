import Foundation

/// A Google Cloud service account key file (`GOOGLE_PLAY_SERVICE_ACCOUNT_FILE`): who the server
/// is to Google (`client_email`), the RSA key it signs its token requests with, and where it
/// exchanges them (`token_uri`). Read once at start-up; a bad file is refused then, naming the
/// field, so a misconfiguration never waits for the first purchase to show.
public struct ServiceAccountKey: Sendable {
  /// A key file is about 2.3 KB; anything far larger is not one.
  public static let maxFileBytes = 64 * 1024

  public let clientEmail: String
  /// `kid` of the assertions, so Google finds the key among the account's; nil when the file
  /// names none.
  public let privateKeyId: String?
  public let tokenURI: URL
  public let privateKey: RSAPrivateKey

  public init(
    clientEmail: String, privateKeyId: String?, tokenURI: URL, privateKey: RSAPrivateKey
  ) {
    self.clientEmail = clientEmail
    self.privateKeyId = privateKeyId
    self.tokenURI = tokenURI
    self.privateKey = privateKey
  }

  /// Reads the key file at `path`.
  public init(contentsOf path: String) throws(ServiceAccountKeyError) {
    guard let handle = FileHandle(forReadingAtPath: path) else { throw .unreadable(path) }
    defer { try? handle.close() }
    guard let data = try? handle.read(upToCount: Self.maxFileBytes + 1) else {
      throw .unreadable(path)
    }
    try self.init(json: [UInt8](data))
  }

  /// Decodes the key file's JSON.
  public init(json bytes: [UInt8]) throws(ServiceAccountKeyError) {
    guard bytes.count <= Self.maxFileBytes else { throw .tooLarge }
    guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)),
      let fields = object as? [String: Any]
    else { throw .notJSONObject }
    if let type = fields["type"] {
      guard type as? String == "service_account" else {
        throw .invalid("type", "must be \"service_account\"")
      }
    }
    let email = try Self.string("client_email", in: fields)
    guard email.contains("@"), !email.contains(where: \.isWhitespace) else {
      throw .invalid("client_email", "is not an email address")
    }
    let pem = try Self.string("private_key", in: fields)
    guard let key = RSAPrivateKey(pem: pem) else {
      throw .invalid("private_key", "is not a PEM RSA private key of 2048 bits or more")
    }
    let uriText = try Self.string("token_uri", in: fields)
    guard let uri = URL(string: uriText), Self.isAcceptable(tokenURI: uri) else {
      throw .invalid("token_uri", "must be an https URL (http only on a loopback address)")
    }
    var keyId: String?
    if let value = fields["private_key_id"] {
      guard let text = value as? String, !text.isEmpty else {
        throw .invalid("private_key_id", "must be a non-empty string")
      }
      keyId = text
    }
    self.init(clientEmail: email, privateKeyId: keyId, tokenURI: uri, privateKey: key)
  }

  private static func string(_ name: String, in fields: [String: Any])
    throws(ServiceAccountKeyError) -> String
  {
    guard let value = fields[name] else { throw .missing(name) }
    guard let text = value as? String else { throw .invalid(name, "must be a string") }
    guard !text.isEmpty else { throw .invalid(name, "must not be empty") }
    return text
  }

  /// Google's token URI is https; plain http is for a local fake only, never across a network,
  /// since the exchange carries a signed assertion and returns a bearer token.
  static func isAcceptable(tokenURI url: URL) -> Bool {
    guard let host = url.host, !host.isEmpty else { return false }
    switch url.scheme?.lowercased() {
    case "https": return true
    case "http": return host == "localhost" || host.hasPrefix("127.") || host == "::1"
    default: return false
    }
  }
}
