import { Type } from 'typebox';
import { StringEnum } from '../../model/schema-helpers.js';

export const GeoRuleStored = Type.Object({
  country: Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2, uppercase' }),
  action: StringEnum(['allow', 'block']),
  label: Type.Union([Type.String({ maxLength: 64 }), Type.Null()], { default: null }),
  status: StringEnum(['active', 'disabled'], { default: 'active' }),
});

const editable = {
  country_code: Type.String({ description: '2 letters, any case' }),
  action: Type.String({ description: 'allow (or pass) / block (or deny), any case' }),
  status: StringEnum(['active', 'disabled']),
  label: Type.Union([Type.String({ maxLength: 64 }), Type.Null()]),
};
export const GeoRuleCreate = Type.Object(editable, { required: ['country_code', 'action'], additionalProperties: false });
export const GeoRuleUpdate = Type.Object(
  { ...editable, id: Type.String(), country: Type.String(), cidr_count: Type.Integer(), created_at: Type.String(), updated_at: Type.String() },
  { required: [], additionalProperties: false },
);

export const GeoRuleComputed = { country_code: Type.String(), cidr_count: Type.Integer() };

export const GeoRuleRecord = Type.Object({
  id: Type.String(),
  country: Type.String(),
  action: Type.String(),
  label: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  ...GeoRuleComputed,
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const GeoLookupResult = Type.Object({
  ip: Type.String(),
  country: Type.Union([Type.String(), Type.Null()]),
  network: Type.Union([Type.String(), Type.Null()]),
  country_code: Type.Union([Type.String(), Type.Null()]),
  country_name: Type.Union([Type.String(), Type.Null()]),
  found: Type.Boolean(),
  asn: Type.Union([Type.Integer(), Type.Null()], { description: 'null: the shipped dataset has no ASN data' }),
  as_org: Type.Union([Type.String(), Type.Null()]),
  source: Type.String(),
});
