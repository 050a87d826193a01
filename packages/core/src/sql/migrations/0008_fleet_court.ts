import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The vehicle registry, court cases with their hearings, and the index a
 * vehicle's deletion reads: the routes that use it and are not finished.
 * `delivery_routes.vehicle_id` gets no foreign key: a finished route keeps
 * the vehicle it was driven with after the vehicle leaves the registry, and
 * routes written before the registry keep the ids they were given (decided:
 * docs/decisions.md, "Fleet vehicles and court cases").
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const tenant = sql`organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox'))`

  yield* sql`CREATE TABLE fleet_vehicles (
    id uuid PRIMARY KEY,
    ${tenant},
    plate text NOT NULL CHECK (plate ~ '^[A-Z0-9]{4,8}$'),
    make text,
    model text,
    fuel_type text NOT NULL CHECK (fuel_type IN ('diesel', 'petrol', 'electric', 'hybrid', 'lpg')),
    capacity_kg numeric(10, 3) CHECK (capacity_kg > 0),
    capacity_parcels integer CHECK (capacity_parcels > 0),
    fuel_consumption_l_per_100km numeric(6, 3) CHECK (fuel_consumption_l_per_100km > 0),
    active boolean NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT fleet_vehicles_plate_unique UNIQUE (organization_id, environment, plate)
  )`
  yield* sql`CREATE INDEX fleet_vehicles_tenant ON fleet_vehicles (organization_id, environment, created_at DESC, id DESC)`

  yield* sql`CREATE INDEX delivery_routes_open_vehicle ON delivery_routes (organization_id, environment, vehicle_id)
    WHERE vehicle_id IS NOT NULL AND status NOT IN ('COMPLETED', 'CANCELLED')`

  yield* sql`CREATE TABLE court_cases (
    id uuid PRIMARY KEY,
    ${tenant},
    number text NOT NULL,
    court text NOT NULL CHECK (char_length(court) BETWEEN 1 AND 200),
    subject text,
    parties jsonb NOT NULL,
    panel text,
    status text NOT NULL CHECK (status IN ('open', 'suspended', 'closed')),
    notes text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT court_cases_number_unique UNIQUE (organization_id, environment, number)
  )`
  yield* sql`CREATE INDEX court_cases_tenant ON court_cases (organization_id, environment, created_at DESC, id DESC)`

  yield* sql`CREATE TABLE court_hearings (
    id uuid PRIMARY KEY,
    ${tenant},
    case_id uuid NOT NULL REFERENCES court_cases(id) ON DELETE CASCADE,
    hearing_date date NOT NULL,
    court text NOT NULL CHECK (char_length(court) BETWEEN 1 AND 200),
    panel text,
    solution text,
    notes text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX court_hearings_case ON court_hearings (case_id, created_at DESC, id DESC)`
})
