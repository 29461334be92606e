import { pick, seededRandom, uuidFrom } from '../kit/random.ts';

export interface EmulatedUser {
  id: string;
  first_name: string;
  last_name: string;
  email: string;
  admin: boolean;
  manager_id: string | null;
  custom: Record<string, string>;
  country: string;
  time_zone: string;
  status: 'active' | 'archived';
  budget_boost: number;
  earning_balance: number;
  lifetime_earnings: number;
  giving_balance: number;
  last_active_at: string | null;
}

export interface EmulatedKey {
  id: string;
  label: string;
  read_only: boolean;
  token: string;
  user_id: string;
}

export interface EmulatedBonus {
  id: string;
  created_at: string;
  giver_id: string;
  receiver_ids: string[];
  amount: number;
  hashtag: string;
  reason: string;
}

export interface Denomination {
  id: string;
  name: string;
  price: number;
}

export interface CatalogueItem {
  name: string;
  slug: string;
  type: string;
  description: string;
  denominations: Denomination[];
}

export interface EmulatedRedemption {
  id: string;
  created_at: string | null;
  state: string;
  reward_id: string;
  auto_approvable: boolean;
}

export interface EmulatedWebhook {
  id: string;
  url: string;
  event_types: string[];
}

/** Demo credentials: printed by `npm start` and used by the tests. */
export const DEMO_TOKENS = {
  admin: 'demo-admin-token-7f3c9a1e2b4d8c6f',
  member: 'demo-member-token-4b8e6d2a9c1f3e5a',
  readOnly: 'demo-readonly-token-9d2c5e8a1b7f0c4d',
} as const;

export const HASHTAGS = ['#teamwork', '#ownership', '#customer-love', '#innovation', '#kindness', '#shipit', '#mentoring'];
export const COUNTRIES: Record<string, { symbol: string; rate: number }> = {
  US: { symbol: '$', rate: 1 },
  CA: { symbol: 'CA$', rate: 1.35 },
  GB: { symbol: '£', rate: 0.8 },
  PT: { symbol: '€', rate: 0.92 },
};

const FIRST = ['Ada', 'Bo', 'Chen', 'Dara', 'Eli', 'Fatima', 'Gus', 'Hana', 'Ines', 'Jon', 'Kemi', 'Lars', 'Mina', 'Nuno', 'Olu', 'Priya'];
const LAST = ['Lovelace', 'Diaz', 'Okafor', 'Silva', 'Tanaka', 'Berg', 'Moreau', 'Khan', 'Novak', 'Reyes'];
const DEPARTMENTS = ['Engineering', 'Sales', 'Support', 'Design'];
const LOCATIONS = ['Lisbon', 'London', 'Austin'];
const REASONS = ['for the calm release', 'for unblocking the team', 'for the great demo', 'for the thoughtful review', 'for jumping on that incident'];

const CATALOGUE: CatalogueItem[] = [
  { type: 'gift_card', name: 'Bookshop Gift Card', slug: 'bookshop', description: 'Any book, any shop.', denominations: [] },
  { type: 'gift_card', name: 'Coffee Card', slug: 'coffee', description: 'A warm drink on us.', denominations: [] },
  { type: 'gift_card', name: 'Cinema Pass', slug: 'cinema', description: 'Popcorn not included.', denominations: [] },
  { type: 'donation', name: 'Ocean Cleanup', slug: 'ocean', description: 'Remove plastic from the sea.', denominations: [] },
  { type: 'donation', name: 'Code Club', slug: 'codeclub', description: 'Teach children to code.', denominations: [] },
  { type: 'company', name: 'Extra Day Off', slug: 'dayoff', description: 'Rest, on the company.', denominations: [] },
  { type: 'company', name: 'Team Hoodie', slug: 'hoodie', description: 'Soft and warm.', denominations: [] },
];
const FACE_VALUES: Record<string, number[]> = {
  bookshop: [10, 25, 50],
  coffee: [5, 10],
  cinema: [15, 30],
  ocean: [5, 20],
  codeclub: [10, 25],
  dayoff: [50],
  hoodie: [15],
};
export const GROUP_NAMES: Record<string, string> = { gift_card: 'Gift cards', donation: 'Donations', company: 'Company rewards' };

export interface RecognitionState {
  users: EmulatedUser[];
  keys: EmulatedKey[];
  bonuses: EmulatedBonus[];
  catalogue: CatalogueItem[];
  redemptions: EmulatedRedemption[];
  webhooks: EmulatedWebhook[];
  analyticsReady: boolean;
}

const DAY = 24 * 60 * 60 * 1000;

/** The demo company: 120 users under 10 managers, 600 bonuses over 60 days, 16 rewards, 40 redemptions. */
export function seedRecognition(now: number): RecognitionState {
  const random = seededRandom(20261122);
  const users: EmulatedUser[] = Array.from({ length: 120 }, (_, index) => {
    const n = index + 1;
    const first = FIRST[index % FIRST.length]!;
    const last = LAST[Math.floor(index / FIRST.length) % LAST.length]!;
    const id = `usr_${String(n).padStart(3, '0')}`;
    return {
      id,
      first_name: first,
      last_name: last,
      email: `${first}.${last}.${n}@demo.example`.toLowerCase(),
      admin: n === 1,
      manager_id: n <= 10 ? null : `usr_${String(1 + (index % 10)).padStart(3, '0')}`,
      custom: { department: DEPARTMENTS[index % DEPARTMENTS.length]!, location: LOCATIONS[index % LOCATIONS.length]! },
      country: pick(random, ['US', 'GB', 'PT', 'CA']),
      time_zone: pick(random, ['Europe/Lisbon', 'Europe/London', 'America/Chicago']),
      status: n % 37 === 0 ? 'archived' : 'active',
      budget_boost: n % 5 === 0 ? 50 : 0,
      earning_balance: Math.floor(random() * 500),
      lifetime_earnings: 500 + Math.floor(random() * 5000),
      giving_balance: 100,
      last_active_at: n % 11 === 0 ? null : new Date(now - Math.floor(random() * 10) * DAY).toISOString(),
    };
  });

  const keys: EmulatedKey[] = [
    { id: uuidFrom(random), label: 'Demo admin key', read_only: false, token: DEMO_TOKENS.admin, user_id: 'usr_001' },
    { id: uuidFrom(random), label: 'Demo member key', read_only: false, token: DEMO_TOKENS.member, user_id: 'usr_002' },
    { id: uuidFrom(random), label: 'Demo read-only key', read_only: true, token: DEMO_TOKENS.readOnly, user_id: 'usr_002' },
  ];

  const bonuses: EmulatedBonus[] = Array.from({ length: 600 }, (_, index) => {
    const giver = pick(random, users);
    const receivers = new Set<string>();
    const count = 1 + Math.floor(random() * 3);
    while (receivers.size < count) {
      const receiver = pick(random, users);
      if (receiver.id !== giver.id) receivers.add(receiver.id);
    }
    const hashtag = pick(random, HASHTAGS);
    return {
      id: `bon_${String(index + 1).padStart(4, '0')}`,
      created_at: new Date(now - Math.floor(random() * 60 * DAY)).toISOString(),
      giver_id: giver.id,
      receiver_ids: [...receivers],
      amount: 5 * (1 + Math.floor(random() * 5)),
      hashtag,
      reason: `+10 ${pick(random, REASONS)} ${hashtag}`,
    };
  });

  const catalogue = CATALOGUE.map((item) => ({
    ...item,
    denominations: FACE_VALUES[item.slug]!.map((value) => ({ id: `rw_${item.slug}_${value}`, name: `${item.name} ${value}`, price: value * 100 })),
  }));
  const rewardIds = catalogue.flatMap((item) => item.denominations.map((denomination) => denomination.id));

  const redemptions: EmulatedRedemption[] = Array.from({ length: 40 }, (_, index) => ({
    id: `rd_${String(index + 1).padStart(3, '0')}`,
    created_at: index % 9 === 8 ? null : new Date(now - index * DAY).toISOString(),
    state: pick(random, ['fulfilled', 'fulfilled', 'pending', 'rejected']),
    // Eight rewards shared by forty redemptions: the DataLoader test depends on the repetition.
    reward_id: rewardIds[index % 8]!,
    auto_approvable: index % 3 !== 0,
  }));

  return { users, keys, bonuses, catalogue, redemptions, webhooks: [], analyticsReady: true };
}
