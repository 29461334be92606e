import { COUNTRIES, type CatalogueItem, type Denomination, type EmulatedRedemption, type EmulatedUser } from './data.ts';

const PICS = 'https://cdn.recognition.example/avatars';

/** The user object as the service returns it; balances only to the user themself or an admin. */
export function presentUser(user: EmulatedUser, viewer: EmulatedUser): Record<string, unknown> {
  const privileged = viewer.admin || viewer.id === user.id;
  const username = `${user.first_name}.${user.last_name}`.toLowerCase();
  return {
    id: user.id,
    short_name: user.first_name,
    display_name: `${user.first_name} ${user.last_name}`,
    username,
    email: user.email,
    path: `/company/users/${user.id}`,
    full_pic_url: `${PICS}/${user.id}-full.png`,
    profile_pic_url: `${PICS}/${user.id}.png`,
    first_name: user.first_name,
    last_name: user.last_name,
    last_active_at: user.last_active_at,
    external_unique_id: `ext-${user.id}`,
    budget_boost: user.budget_boost,
    user_mode: 'normal',
    country: user.country,
    time_zone: user.time_zone,
    ...user.custom,
    can_give: user.status === 'active',
    can_receive: user.status === 'active',
    ...(privileged
      ? {
          earning_balance: user.earning_balance,
          lifetime_earnings: user.lifetime_earnings,
          giving_balance: user.giving_balance,
          earning_balance_with_currency: `${user.earning_balance} points`,
          lifetime_earnings_with_currency: `${user.lifetime_earnings} points`,
          giving_balance_with_currency: `${user.giving_balance} points`,
        }
      : {}),
    status: user.status,
  };
}

export function displayPrice(points: number, country: string | null): string {
  const { symbol, rate } = COUNTRIES[country ?? 'US'] ?? COUNTRIES.US!;
  return `${symbol}${((points / 100) * rate).toFixed(2)}`;
}

const imageOf = (item: CatalogueItem) => `https://cdn.recognition.example/rewards/${item.slug}.png`;

export function presentCatalogueEntry(item: CatalogueItem, country: string | null): Record<string, unknown> {
  const cheapest = Math.min(...item.denominations.map((denomination) => denomination.price));
  return {
    name: item.name,
    image_url: imageOf(item),
    minimum_display_price: displayPrice(cheapest, country),
    description: { text: item.description, html: `<p>${item.description}</p>` },
    disclaimer_html: `<p>${item.name} is offered by its issuer.</p>`,
    warning: item.type === 'gift_card' ? 'Gift cards cannot be exchanged for cash.' : '',
    denominations: item.denominations.map((denomination) => ({
      id: denomination.id,
      name: denomination.name,
      price: denomination.price,
      display_price: displayPrice(denomination.price, country),
    })),
  };
}

export function presentReward(item: CatalogueItem, denomination: Denomination, country: string | null): Record<string, unknown> {
  return {
    id: denomination.id,
    name: denomination.name,
    price: denomination.price,
    display_price: displayPrice(denomination.price, country),
    description: { text: item.description, html: `<p>${item.description}</p>` },
    image_url: imageOf(item),
    disclaimer_html: `<p>${item.name} is offered by its issuer.</p>`,
    warning: item.type === 'gift_card' ? 'Gift cards cannot be exchanged for cash.' : '',
    quantity: item.type === 'company' ? 10 : 1000,
    type: item.type,
  };
}

export function presentRedemption(redemption: EmulatedRedemption, item: CatalogueItem, denomination: Denomination): Record<string, unknown> {
  return {
    id: redemption.id,
    created_at: redemption.created_at,
    state: redemption.state,
    certificate_url: `https://rewards.recognition.example/certificates/${redemption.id}.pdf`,
    claim_url: `https://rewards.recognition.example/claim/${redemption.id}`,
    auto_approvable: redemption.auto_approvable,
    reward_details: {
      id: denomination.id,
      name: denomination.name,
      price: denomination.price,
      display_price: displayPrice(denomination.price, 'US'),
      type: item.type,
      image_url: imageOf(item),
    },
  };
}
