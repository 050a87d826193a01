import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Delivery routes and their stops, the per-tenant route number sequence, the
 * fleet cost profile, the sender address and courier rate card used by the
 * cost comparison, and the rate-limit counters.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE delivery_route_numbers (
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    last_number integer NOT NULL,
    PRIMARY KEY (organization_id, environment)
  )`
  // start_location_id has no foreign key: the route keeps the coordinates it
  // copied from the location, and deleting the location must not touch it.
  yield* sql`CREATE TABLE delivery_routes (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    number text NOT NULL,
    name text NOT NULL,
    status text NOT NULL
      CHECK (status IN ('DRAFT', 'PLANNED', 'DISPATCHED', 'IN_PROGRESS', 'COMPLETED', 'CANCELLED')),
    route_date timestamptz NOT NULL,
    start_location_id uuid,
    start_address jsonb,
    start_latitude double precision NOT NULL,
    start_longitude double precision NOT NULL,
    round_trip boolean NOT NULL,
    vehicle_id uuid,
    driver_id uuid,
    capacity_kg numeric(12, 3),
    capacity_parcels integer,
    total_distance_km numeric(12, 3),
    total_duration_minutes integer,
    optimized_at timestamptz,
    optimizer text,
    dispatched_at timestamptz,
    started_at timestamptz,
    completed_at timestamptz,
    cancelled_at timestamptz,
    gate_visit_id uuid,
    notes text,
    dispatch_count integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT delivery_routes_number_key UNIQUE (organization_id, environment, number)
  )`
  yield* sql`CREATE INDEX delivery_routes_tenant ON delivery_routes (organization_id, environment, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX delivery_routes_date ON delivery_routes (organization_id, environment, route_date)`
  // Positions are dense per route; the constraint is checked at the end of each
  // statement, so one UPDATE can permute them.
  yield* sql`CREATE TABLE delivery_route_stops (
    id uuid PRIMARY KEY,
    route_id uuid NOT NULL REFERENCES delivery_routes(id) ON DELETE CASCADE,
    organization_id uuid NOT NULL,
    environment text NOT NULL,
    position integer NOT NULL CHECK (position >= 1),
    label text NOT NULL,
    address jsonb,
    latitude double precision NOT NULL,
    longitude double precision NOT NULL,
    parcels integer NOT NULL CHECK (parcels >= 1),
    weight_kg numeric(12, 3) NOT NULL CHECK (weight_kg >= 0),
    service_minutes integer NOT NULL CHECK (service_minutes >= 0),
    window_start text,
    window_end text,
    notes text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT delivery_route_stops_position_key UNIQUE (route_id, position) DEFERRABLE INITIALLY IMMEDIATE
  )`
  yield* sql`CREATE TABLE fleet_cost_profiles (
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    currency char(3) NOT NULL,
    fuel_consumption_l_per_100km numeric(8, 3) NOT NULL,
    fuel_price_per_litre_minor bigint NOT NULL,
    driver_cost_per_hour_minor bigint NOT NULL,
    tolls_per_km_minor bigint NOT NULL,
    depreciation_per_km_minor bigint NOT NULL,
    insurance_per_year_minor bigint NOT NULL,
    annual_km integer,
    maintenance_per_km_minor bigint NOT NULL,
    tyres_per_km_minor bigint NOT NULL,
    co2_grams_per_litre integer NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (organization_id, environment)
  )`
  yield* sql`CREATE TABLE courier_rate_cards (
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    currency char(3) NOT NULL,
    couriers jsonb NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (organization_id, environment)
  )`
  yield* sql`CREATE TABLE sender_addresses (
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    address jsonb NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (organization_id, environment)
  )`
  // One row per limited key: the current fixed window and how many requests it admitted.
  yield* sql`CREATE TABLE rate_limit_counters (
    key text PRIMARY KEY,
    window_start timestamptz NOT NULL,
    count integer NOT NULL
  )`
})
