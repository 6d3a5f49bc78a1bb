import * as sqlite from '../schema';
import { pgTablesFrom } from './from-sqlite';

/**
 * The PostgreSQL schema: the SQLite schema's tables converted (from-sqlite.ts), one export a
 * table because drizzle-kit reads a schema module's exports (drizzle.pg.config.ts). A test
 * checks that every SQLite table is exported here.
 */
const tables = pgTablesFrom(sqlite);

export const apiKeys = tables.apiKeys!;
export const apiResponses = tables.apiResponses!;
export const apiResponseEvents = tables.apiResponseEvents!;
export const bookmarkGroups = tables.bookmarkGroups!;
export const bookmarkItems = tables.bookmarkItems!;
export const conversationBranches = tables.conversationBranches!;
export const conversationItems = tables.conversationItems!;
export const conversationWriters = tables.conversationWriters!;
export const conversationShares = tables.conversationShares!;
export const conversations = tables.conversations!;
export const creditLedger = tables.creditLedger!;
export const fileBlobs = tables.fileBlobs!;
export const files = tables.files!;
export const fileAttachments = tables.fileAttachments!;
export const fileChunks = tables.fileChunks!;
export const embeddingModels = tables.embeddingModels!;
export const groupAnswerAuthors = tables.groupAnswerAuthors!;
export const groupChats = tables.groupChats!;
export const groupEvents = tables.groupEvents!;
export const groupInvites = tables.groupInvites!;
export const groupMembers = tables.groupMembers!;
export const leases = tables.leases!;
export const rateBuckets = tables.rateBuckets!;
export const loginLinks = tables.loginLinks!;
export const pushTokens = tables.pushTokens!;
export const responseEvents = tables.responseEvents!;
export const responseToolOutputs = tables.responseToolOutputs!;
export const responses = tables.responses!;
export const sessions = tables.sessions!;
export const users = tables.users!;
export const widgetThreadMessages = tables.widgetThreadMessages!;
export const widgetThreads = tables.widgetThreads!;
export const widgets = tables.widgets!;
export const newsPosts = tables.newsPosts!;
export const newsReads = tables.newsReads!;
export const miniApps = tables.miniApps!;
export const memories = tables.memories!;
export const answerFeedback = tables.answerFeedback!;
export const supportThreads = tables.supportThreads!;
export const supportMessages = tables.supportMessages!;
export const setupTokens = tables.setupTokens!;
export const connections = tables.connections!;
export const modelSettings = tables.modelSettings!;
export const serverSettings = tables.serverSettings!;
export const toolApprovals = tables.toolApprovals!;
export const conversationToolRules = tables.conversationToolRules!;
export const assistants = tables.assistants!;
export const assistantAvatars = tables.assistantAvatars!;
export const usageRecords = tables.usageRecords!;
export const usageDays = tables.usageDays!;
export const usageReservations = tables.usageReservations!;
export const usageTiers = tables.usageTiers!;
export const usagePrices = tables.usagePrices!;
export const mcpServers = tables.mcpServers!;
export const mcpTokens = tables.mcpTokens!;
export const oauthClients = tables.oauthClients!;
export const oauthCodes = tables.oauthCodes!;
export const oauthGrants = tables.oauthGrants!;
export const oauthTokens = tables.oauthTokens!;
export const videoJobs = tables.videoJobs!;
