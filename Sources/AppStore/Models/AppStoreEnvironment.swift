/// The App Store environment a payload comes from.
///
/// Payloads keep Apple's raw string; this is read through a computed property, so a value
/// Apple adds later still decodes.
public enum AppStoreEnvironment: String, Sendable, Codable, CaseIterable {
  case production = "Production"
  case sandbox = "Sandbox"
  case xcode = "Xcode"
  case localTesting = "LocalTesting"
}
