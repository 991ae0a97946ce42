/// `notificationType` of a `SubscriptionNotification` (RTDN reference). Codes 8, 14, 15, 16 and
/// 21 are not in the reference (retired or never used).
public enum SubscriptionNotificationType: Int, Sendable, CaseIterable {
  case recovered = 1
  case renewed = 2
  case canceled = 3
  case purchased = 4
  case onHold = 5
  case inGracePeriod = 6
  case restarted = 7
  case deferred = 9
  case paused = 10
  case pauseScheduleChanged = 11
  case revoked = 12
  case expired = 13
  case itemsChanged = 17
  case cancellationScheduled = 18
  case priceChangeUpdated = 19
  case pendingPurchaseCanceled = 20
  case priceStepUpConsentUpdated = 22
}
