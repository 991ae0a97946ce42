/// OpenSSL could not do what the fake needed (make a key, sign); the call is named.
struct FakeCryptoError: Error, CustomStringConvertible {
  var description: String
  init(_ call: String) { description = "OpenSSL failed: \(call)" }
}
