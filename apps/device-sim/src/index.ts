export { type Credentials, type DeviceOptions, RegistrationError, SimulatedDevice } from './device';
export { Fleet, type FleetOptions, profileFor } from './fleet';
export { imeiFor, luhnDigit, rng } from './imei';
export {
  MultiplexedFleet,
  type MultiplexOptions,
  type MultiplexStats,
  type MultiplexSubscription,
} from './multiplex';
export { HISTORY_LIMIT, pushCapped, REMEMBER_AT_LEAST_MS, REMEMBERED_IDS, RecentIds } from './recent';
