/// The status of an auto-renewable subscription in a notification.
///
/// Payloads keep Apple's raw number; this is read through a computed property, so a value
/// Apple adds later still decodes.
public enum SubscriptionStatus: Int32, Sendable, Codable, CaseIterable {
  case active = 1
  case expired = 2
  case billingRetry = 3
  case billingGracePeriod = 4
  case revoked = 5
}
