import Foundation
import Testing

extension Trait where Self == ConditionTrait {
  /// On a suite that needs PostgreSQL: skipped, saying why, when `DATABASE_URL` is unset.
  static var database: Self {
    .enabled(
      if: ProcessInfo.processInfo.environment["DATABASE_URL"]?.isEmpty == false,
      "DATABASE_URL is not set: this suite needs PostgreSQL (scripts/test starts one and sets it)")
  }
}
