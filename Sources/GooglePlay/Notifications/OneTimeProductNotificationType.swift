/// `notificationType` of a `OneTimeProductNotification`.
public enum OneTimeProductNotificationType: Int, Sendable, CaseIterable {
  case purchased = 1
  case canceled = 2
}
