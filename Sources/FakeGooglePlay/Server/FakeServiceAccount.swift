import Foundation

/// The service account the fake issues a key for, as Google Cloud would: the fake keeps the
/// key pair, hands out the private half in a key file, and takes assertions it signed.
final class FakeServiceAccount: Sendable {
  let clientEmail: String
  let privateKeyId: String
  let key: FakeRSAKey
  private let privateKeyPEM: String

  init(clientEmail: String) throws {
    self.clientEmail = clientEmail
    key = try FakeRSAKey()
    privateKeyPEM = try key.privateKeyPEM()
    privateKeyId = String(FakePlayState.newToken().dropFirst(5).prefix(40))
  }

  /// The key file, shaped as Google Cloud's console downloads it.
  func keyFile(tokenURI: String) throws -> [UInt8] {
    let file: [String: String] = [
      "type": "service_account", "project_id": "fake-project",
      "private_key_id": privateKeyId, "private_key": privateKeyPEM,
      "client_email": clientEmail, "client_id": "100000000000000000001",
      "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": tokenURI,
    ]
    return [UInt8](
      try JSONSerialization.data(
        withJSONObject: file, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]))
  }
}
